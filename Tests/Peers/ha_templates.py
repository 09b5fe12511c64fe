#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Home Assistant's side of the kiosk's discovery (issue 33): each config message on stdin (a JSON
list of {"topic", "payload"}) is checked for the keys Home Assistant's MQTT select and button
require, and its command_template rendered with Jinja2 (Home Assistant's template engine) the way
Home Assistant renders it: `value` the option chosen, `now()` a timezone-aware datetime. Prints a
JSON list of {"entity", "value", "command"}."""
import datetime
import json
import sys

import jinja2

REQUIRED = {"select": ["command_topic", "options", "unique_id", "device"], "button": ["command_topic", "unique_id", "device"]}

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
