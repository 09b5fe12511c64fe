// SPDX-License-Identifier: Apache-2.0
/// Home Assistant's MQTT discovery for one kiosk (`KIOSK_MQTT_DISCOVERY`, default prefix
/// `homeassistant`): retained config messages on `<prefix>/<component>/<node_id>/<object_id>/config`
/// that make the kiosk a device with a tag scanner and an event entity for its scans, and sensors
/// for its torch, its camera and its frame rate (and the door's entities, the duress alarm's event). Published on every connection and again when Home
/// Assistant says `online` on `<prefix>/status` (it forgets what it was told when it restarts
/// without a retained copy).
public struct HomeAssistantDiscovery: Equatable, Sendable {
    public var prefix: String
    /// The node id and the device's identity: the client id, made safe ([a-z0-9_-]).
    public var nodeID: String
    public var topics: FleetTopics
    public var version: String
    /// A door binary sensor (`<topic>/door`) when the door contact is watched, a tamper
    /// binary sensor (`tamper` in `<topic>/state`) when the tamper loop is.
    public var door: Bool
    public var tamper: Bool
    /// With `KIOSK_MQTT_COMMANDS=1` and a strike: a select for the door's mode and a
    /// button that opens it, both sending the building's commands.
    public var commands: Bool
    /// In credentials mode, a sensor for the clock's source (`clock` in `<topic>/state`).
    public var clock: Bool
    /// With a keypad and a duress code (credentials mode): an event entity for the duress alarm.
    public var duress: Bool

    public init(prefix: String, clientID: String, topics: FleetTopics, version: String, door: Bool = false, tamper: Bool = false,
                commands: Bool = false, clock: Bool = false, duress: Bool = false) {
        self.commands = commands
        self.duress = duress
        self.clock = clock
        self.prefix = prefix
        self.nodeID = FleetTopics.topicLevel(clientID)
        self.topics = topics
        self.version = version
        self.door = door
        self.tamper = tamper
    }

    /// Where Home Assistant says `online` when it starts.
    public var statusTopic: String { prefix + "/status" }

    public struct Message: Equatable, Sendable {
        public var topic: String
        /// JSON; retained.
        public var payload: String
    }

    public var messages: [Message] {
        let q = JSONText.quoted
        let device = "{\"identifiers\":[\(q("kiosk_" + nodeID))],\"name\":\(q("Kiosk " + nodeID)),"
            + "\"manufacturer\":\"kiosk\",\"model\":\"Door barcode and QR-code scanner\",\"sw_version\":\(q(version))}"
        let availability = "\"availability_topic\":\(q(topics.status)),\"payload_available\":\"online\",\"payload_not_available\":\"offline\""
        let origin = "\"origin\":{\"name\":\"kiosk\",\"sw_version\":\(q(version))}"
        func entity(_ component: String, _ object: String, _ body: String) -> Message {
            Message(topic: "\(prefix)/\(component)/\(nodeID)/\(object)/config",
                    payload: "{\(body),\"unique_id\":\(q("kiosk_\(nodeID)_\(object)")),"
                        + "\(availability),\"device\":\(device),\(origin)}")
        }
        // A tag scanner (its tag id: the text, else the bytes in base64) has neither a name nor
        // availability in its schema; Home Assistant fires `tag_scanned` with it. A credential's
        // scan has neither (its token is never published): the id is empty and nothing fires;
        // `default` and not the bare attribute, which Home Assistant logs as a warning each time.
        let tag = Message(topic: "\(prefix)/tag/\(nodeID)/scan/config",
                          payload: "{\"topic\":\(q(topics.scan)),"
                              + "\"value_template\":\(q("{{ value_json.data if value_json.data is defined else value_json.data_base64 | default('') }}")),"
                              + "\"device\":\(device)}")
        var doorEntities: [Message] = []
        if door {
            // Open, forced and held are all "open" to Home Assistant; the alarm is in the value's text.
            doorEntities.append(entity("binary_sensor", "door", "\"name\":\"Door\",\"state_topic\":\(q(topics.door)),"
                + "\"value_template\":\(q("{{ 'closed' if value == 'closed' else 'open' }}")),"
                + "\"payload_on\":\"open\",\"payload_off\":\"closed\",\"device_class\":\"door\""))
        }
        if tamper {
            doorEntities.append(entity("binary_sensor", "tamper", "\"name\":\"Tamper\",\"state_topic\":\(q(topics.state)),"
                + "\"value_template\":\(q("{{ value_json.tamper }}")),"
                + "\"payload_on\":\"alarm\",\"payload_off\":\"ok\",\"device_class\":\"tamper\",\"entity_category\":\"diagnostic\""))
        }
        if commands {
            // Home Assistant renders these with its own Jinja (now(), as_timestamp); each command
            // gets a fresh id and the time the kiosk checks. An unlock from the select lasts an hour.
            let stamp = "\"id\":\"ha-{{ now().timestamp() }}\",\"time\":{{ now().timestamp() | int }}"
            let modeTemplate = "{\"command\":\"mode\",\"mode\":\"{{ value }}\",\(stamp)"
                + "{% if value == 'unlock' %},\"until\":{{ (now().timestamp() + 3600) | int }}{% endif %}}"
            doorEntities.append(entity("select", "mode", "\"name\":\"Mode\",\"state_topic\":\(q(topics.mode)),"
                + "\"value_template\":\(q("{{ value_json.mode }}")),\"command_topic\":\(q(topics.command)),"
                + "\"command_template\":\(q(modeTemplate)),\"options\":[\"normal\",\"unlock\",\"lockdown\",\"emergency\"],"
                + "\"icon\":\"mdi:door-closed-lock\""))
            doorEntities.append(entity("button", "open", "\"name\":\"Open\",\"command_topic\":\(q(topics.command)),"
                + "\"command_template\":\(q("{\"command\":\"open\",\(stamp)}")),\"icon\":\"mdi:door-open\""))
        }
        if clock {
            doorEntities.append(entity("sensor", "clock", "\"name\":\"Clock\",\"state_topic\":\(q(topics.state)),"
                + "\"value_template\":\(q("{{ value_json.clock }}")),\"device_class\":\"enum\",\"options\":[\"ntp\",\"rtc\",\"none\",\"behind\"],"
                + "\"icon\":\"mdi:clock-check-outline\",\"entity_category\":\"diagnostic\""))
        }
        if duress {
            // Home Assistant's MQTT event takes a JSON object with `event_type` (one of
            // `event_types`) and fires nothing for an empty rendering: the duress alarm becomes
            // `duress` with its subject and time, the door's other alarms on the topic nothing.
            let fire = "{{ {'event_type': 'duress', 'subject': value_json.subject, 'time': value_json.time} | tojson "
                + "if value_json.type is defined and value_json.type == 'duress' else '' }}"
            doorEntities.append(entity("event", "duress", "\"name\":\"Duress\",\"state_topic\":\(q(topics.alarm)),"
                + "\"event_types\":[\"duress\"],\"value_template\":\(q(fire)),\"icon\":\"mdi:alarm-light\""))
        }
        return [
            tag,
            entity("event", "scan", "\"name\":\"Scan\",\"state_topic\":\(q(topics.scan)),\"event_types\":[\"scan\"],"
                + "\"value_template\":\(q("{{ {'event_type': 'scan', 'id': value_json.id, 'symbology': value_json.symbology} | tojson }}"))"),
            entity("sensor", "torch", "\"name\":\"Torch\",\"state_topic\":\(q(topics.state)),\"value_template\":\(q("{{ value_json.torch }}")),"
                + "\"device_class\":\"enum\",\"options\":[\"on\",\"off\",\"none\"],\"icon\":\"mdi:flashlight\""),
            entity("sensor", "camera", "\"name\":\"Camera\",\"state_topic\":\(q(topics.state)),\"value_template\":\(q("{{ value_json.camera }}")),"
                + "\"device_class\":\"enum\",\"options\":[\"ok\",\"lost\"],\"icon\":\"mdi:cctv\""),
            entity("sensor", "fps", "\"name\":\"Frame rate\",\"state_topic\":\(q(topics.stats)),\"value_template\":\(q("{{ value_json.fps }}")),"
                + "\"unit_of_measurement\":\"fps\",\"state_class\":\"measurement\",\"icon\":\"mdi:camera-timer\""),
        ] + doorEntities
    }

    /// The `expected` text of a `config_error` for `KIOSK_MQTT_DISCOVERY` (empty turns it off).
    public static let expected = "a Home Assistant discovery prefix (default homeassistant; empty: no discovery) without '+', '#' or spaces"

    public static func isValidPrefix(_ prefix: String) -> Bool {
        FleetTopics.problem(with: prefix) == nil && !prefix.contains(" ")
    }
}
