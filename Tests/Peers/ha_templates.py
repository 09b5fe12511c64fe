#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Home Assistant's side of the kiosk's discovery (issue 33): each config message on stdin (a JSON
list of {"topic", "payload"}) is checked for the keys Home Assistant's MQTT select and button
require, and its command_template rendered with Jinja2 (Home Assistant's template engine) the way
Home Assistant renders it: `value` the option chosen, `now()` a timezone-aware datetime. Prints a
JSON list of {"entity", "value", "command"}.

With an argument, a JSON file of {"TOPIC": [PAYLOAD, ...]} (messages the kiosk sent), each event
entity's value_template is rendered for each payload on its state_topic, `value` the payload and
`value_json` its JSON, and read as homeassistant/components/mqtt/event.py reads it (_event_received):
an empty rendering, `{}` or `None` fires nothing; else a JSON object whose `event_type` (taken out
of the attributes) must be one of `event_types`. Adds {"entity": "event", "object", "value",
"event_type", "attributes"} (event_type null: nothing fired). The tag scanner's value_template
likewise for each payload on its topic, as homeassistant/components/mqtt/tag.py reads it: adds
{"entity": "tag", "value", "tag_id"} (empty: nothing fired). StrictUndefined: an attribute the
payload lacks fails the rendering, where Home Assistant logs a warning."""
import datetime
import json
import sys

import jinja2

REQUIRED = {"select": ["command_topic", "options", "unique_id", "device"], "button": ["command_topic", "unique_id", "device"],
            # tag.py's PLATFORM_SCHEMA: a topic and a device.
            "tag": ["topic", "device"],
            # event.py: MQTT_RO_SCHEMA's state_topic, its own event_types; discovery needs a unique_id.
            "event": ["state_topic", "event_types", "unique_id", "device"]}
samples = json.load(open(sys.argv[1])) if len(sys.argv) > 1 else {}

env = jinja2.Environment(undefined=jinja2.StrictUndefined)
env.globals["now"] = lambda: datetime.datetime.now(datetime.timezone.utc)
out = []
for m in json.load(sys.stdin):
    component = m["topic"].split("/")[1]
    if component not in REQUIRED:
        continue
    config = json.loads(m["payload"])
    missing = [k for k in REQUIRED[component] if k not in config]
    if missing:
        sys.exit(f"{m['topic']}: missing {missing}")
    if component == "tag":
        # tag.py's tag_id: the rendering stripped; an empty one fires no tag_scanned.
        template = env.from_string(config.get("value_template", "{{ value }}"))
        for payload in samples.get(config["topic"], []):
            out.append({"entity": component, "value": payload, "tag_id": template.render(value=payload, value_json=json.loads(payload)).strip()})
        continue
    if component == "event":
        types = config["event_types"]
        if not isinstance(types, list) or not types or not all(isinstance(t, str) for t in types):
            sys.exit(f"{m['topic']}: event_types must be a list of text")
        template = env.from_string(config.get("value_template", "{{ value }}"))
        for payload in samples.get(config["state_topic"], []):
            try:
                value_json = json.loads(payload)
            except ValueError:
                value_json = jinja2.Undefined()
            rendered = template.render(value=payload, value_json=value_json)
            event_type, attributes = None, None
            if rendered not in ("", "{}", "None"):
                attributes = json.loads(rendered)
                if not isinstance(attributes, dict) or "event_type" not in attributes:
                    sys.exit(f"{m['topic']}: `event_type` missing in JSON event payload {rendered!r}")
                event_type = str(attributes.pop("event_type"))
                if event_type not in types:
                    sys.exit(f"{m['topic']}: invalid event type {event_type} (not in {types})")
            out.append({"entity": component, "object": m["topic"].split("/")[3], "value": payload,
                        "event_type": event_type, "attributes": attributes})
        continue
    template = env.from_string(config["command_template"])
    if component == "select":
        options = config["options"]
        if not options or len(set(options)) != len(options) or not all(isinstance(o, str) for o in options):
            sys.exit(f"{m['topic']}: options must be unique text")
        for value in options:
            out.append({"entity": component, "value": value, "command": template.render(value=value)})
    else:
        out.append({"entity": component, "value": None, "command": template.render(value="PRESS")})
print(json.dumps(out))
