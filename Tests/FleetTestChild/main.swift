// SPDX-License-Identifier: Apache-2.0
// The kiosk's MQTT side in a process of its own, for the tests that kill it with SIGKILL (the
// spool must survive it; the broker must publish the last will). Told what to do by the
// environment; says what happened on stdout, one line each, flushed:
//   MQTT_CHILD_PORT, MQTT_CHILD_TOPIC, MQTT_CHILD_SPOOL (a folder), MQTT_CHILD_SCANS (how many to
//   publish at start: child-1, child-2, ...)
//   -> "event connected ..." / "event disconnected ...", then "spooled N" once N scans are in the
//      spool file, then it waits to be killed (or stops cleanly on SIGTERM: "stopped").
import Glibc
import Fleet
import Platform
import Policy

func say(_ line: String) {
    var bytes = Array((line + "\n").utf8)
    _ = write(1, &bytes, bytes.count)
}

let env = Files.environment()

// MQTT_CHILD_MAPS=1: whether libmosquitto and the libssl it pulls in are mapped
// (/proc/self/maps) before anything uses them and after one call: "maps before=no after=yes".
if env["MQTT_CHILD_MAPS"] == "1" {
    func mapped() -> Bool {
        var bytes: [UInt8] = []
        let fd = open("/proc/self/maps", O_RDONLY)
        var chunk = [UInt8](repeating: 0, count: 65536)
        while fd >= 0 { let n = read(fd, &chunk, chunk.count); if n <= 0 { break }; bytes += chunk[0..<n] }
        if fd >= 0 { close(fd) }
        let maps = String(decoding: bytes, as: UTF8.self)
        return maps.contains("libmosquitto") || maps.contains("libssl")
    }
    let before = mapped(), loadedBefore = BrokerLink.libraryLoaded
    let version = BrokerLink.libraryVersion
    say("maps before=\(before ? "yes" : "no") loaded=\(loadedBefore ? "yes" : "no") after=\(mapped() ? "yes" : "no") version=\(version)")
    exit(0)
}

guard let port = env["MQTT_CHILD_PORT"].flatMap(Int.init), let topic = env["MQTT_CHILD_TOPIC"],
      let folder = env["MQTT_CHILD_SPOOL"] else {
    say("usage: MQTT_CHILD_PORT, MQTT_CHILD_TOPIC and MQTT_CHILD_SPOOL in the environment")
    exit(2)
}
let scans = env["MQTT_CHILD_SCANS"].flatMap(Int.init) ?? 0
// SIGTERM blocked before any thread starts (they inherit the mask) and taken by sigwait at the
// end: a SIGTERM that comes early (the test sees "event connected" from the link's thread before
// this thread is done) waits for sigwait instead of killing the child or falling between a flag's
// check and pause().
var terminate = sigset_t()
sigemptyset(&terminate)
sigaddset(&terminate, SIGTERM)
pthread_sigmask(SIG_BLOCK, &terminate, nil)
let spool = try Spool(directory: folder, capacity: 1000)
var settings = BrokerSettings(address: BrokerAddress(host: "127.0.0.1", port: port, tls: false), topics: FleetTopics(prefix: topic),
                              clientID: FleetTopics.defaultClientID(prefix: topic), discoveryPrefix: nil, version: "test")
settings.backoffCapNs = 500_000_000
let link = BrokerLink(settings: settings, spool: spool, clock: MonotonicClock()) { event in
    switch event {
    case .connected(let broker): say("event connected \(broker)")
    case .disconnected(let reason, _): say("event disconnected \(reason)")
    case .spoolWriteFailed(let what): say("event spool_write_failed \(what)")
    }
}
link.start()
let before = spool.count
for i in 1...max(1, scans) where scans > 0 {
    link.publishScan(symbology: "QR-Code", bytes: Array("child-\(i)".utf8), frame: i, latencyMs: 1)
}
// Spooled: in the file (what the spool holds plus what the broker already acknowledged).
while spool.count + link.counters.acknowledged < before + scans { usleep(5000) }
say("spooled \(scans)")
var taken: Int32 = 0
while sigwait(&terminate, &taken) != 0 {}
link.stop()
say("stopped")
