#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Home Assistant's own code on the kiosk's event entities (a manual check, not part of `make test`:
Home Assistant from PyPI needs Python >= 3.13, which bookworm lacks; run it in the trixie root's
Python, docs/building.md says how). Each discovery config message on stdin (a JSON list of
{"topic", "payload"}) of component `event` is validated by homeassistant.components.mqtt.event's
DISCOVERY_SCHEMA; its value_template, set up as the MQTT integration sets it up, is rendered by
Home Assistant's template engine for each message of the JSON file argv[1] ({"TOPIC": [PAYLOAD]})
on its state_topic, and the rendering read as MqttEvent._event_received reads it (nothing fired for
an empty rendering, `{}` or `None`; else `event_type`, one of `event_types`, and the attributes).
Prints a JSON list of {"object", "value", "event_type", "attributes"} and Home Assistant's version."""
import asyncio
import json
import sys
import tempfile

from homeassistant.components.mqtt.const import PAYLOAD_EMPTY_JSON, PAYLOAD_NONE
from homeassistant.components.mqtt.event import DISCOVERY_SCHEMA
from homeassistant.components.mqtt.models import MqttValueTemplate, PayloadSentinel
from homeassistant.const import __version__
from homeassistant.core import HomeAssistant
from homeassistant.util.json import json_loads_object


async def main():
    messages = json.load(sys.stdin)
    samples = json.load(open(sys.argv[1]))
    hass = HomeAssistant(tempfile.mkdtemp())
    out = []
    for m in messages:
        if m["topic"].split("/")[1] != "event":
            continue
        config = DISCOVERY_SCHEMA(json.loads(m["payload"]))  # raises vol.Invalid when Home Assistant refuses it
        template = config.get("value_template")
        if template is not None:
            template.hass = hass
        render = MqttValueTemplate(template).async_render_with_possible_json_value
        for payload in samples.get(config["state_topic"], []):
            rendered = render(payload, PayloadSentinel.DEFAULT)
            event_type, attributes = None, None
            if rendered and rendered is not PayloadSentinel.DEFAULT and rendered not in (PAYLOAD_NONE, PAYLOAD_EMPTY_JSON):
                attributes = json_loads_object(rendered)
                event_type = str(attributes.pop("event_type"))
                if event_type not in config["event_types"]:
                    sys.exit(f"{m['topic']}: invalid event type {event_type}")
            out.append({"object": m["topic"].split("/")[3], "value": payload, "event_type": event_type, "attributes": attributes})
    await hass.async_stop(force=True)
    print(json.dumps({"homeassistant": __version__, "events": out}))


asyncio.run(main())
