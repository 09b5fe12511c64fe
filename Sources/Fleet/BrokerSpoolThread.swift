// SPDX-License-Identifier: Apache-2.0

/// The spool thread (`kiosk-mqtt-spool`): the scans and duress alarms from the inbox appended to
/// the spool file (fsync), then the MQTT thread woken to send them.
extension BrokerLink {
    // MARK: - The spool thread

    func runSpoolWriter() {
        while true {
            let batch: [(payload: [UInt8], kind: Spool.Kind)]? = shared.lock_ {
                while inbox.isEmpty && stopDeadlineNs == nil { shared.wait() }
                if inbox.isEmpty { return nil }
                defer { inbox.removeAll(keepingCapacity: true) }
                return inbox
            }
            guard let batch else { break }
            for event in batch { spool.append(event.payload, kind: event.kind) }
            if let e = spool.writeError, e != lastSpoolError {
                lastSpoolError = e
                onEvent(.spoolWriteFailed("\(spool.path): \(e.message)"))
            }
            wake()
        }
        shared.lock_ {
            spoolWriterDone = true
            shared.broadcast()
        }
        wake()
    }
}
