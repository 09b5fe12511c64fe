// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc

/// A peer written in Python, as the tests' peers are (Tests/Peers/*.py): one process a test, one
/// JSON request and one JSON answer a line; an answer with `error` throws.
public final class PeerProcess {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer = Data()
    private let name: String

    public struct Failure: Error, CustomStringConvertible { public let description: String }
    /// How long one answer may take (a peer signs and verifies in milliseconds; qemu is slower).
    public static let answerSeconds: Double = 60

    /// `name`: how a failure names the peer ("peer", "pretix peer").
    public init(python: String, script: String, name: String) throws {
        self.name = name
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    deinit {
        try? input.fileHandleForWriting.close()
        // The peer ends at the end of its input; one that does not is ended.
        if !Child.awaitExit(process, within: 10) { Child.end(process) }
    }

    /// One request; the answer's fields.
    @discardableResult
    public func ask(_ request: [String: Any]) throws -> [String: Any] {
        var line = try JSONSerialization.data(withJSONObject: request)
        line.append(0x0a)
        input.fileHandleForWriting.write(line)
        let deadline = Date().addingTimeInterval(PeerProcess.answerSeconds)
        while !buffer.contains(0x0a) {
            // Never a wait without an end: a peer that hangs fails the test.
            var p = pollfd(fd: output.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let left = deadline.timeIntervalSinceNow
            guard left > 0, poll(&p, 1, Int32(left * 1000)) > 0 else {
                throw Failure(description: "the \(name) gave no answer within \(Int(PeerProcess.answerSeconds)) s")
            }
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw Failure(description: "the \(name) ended") }
            buffer.append(chunk)
        }
        let end = buffer.firstIndex(of: 0x0a)!
        let answer = buffer[buffer.startIndex..<end]
        buffer = Data(buffer[(end + 1)...])
        let object = try JSONSerialization.jsonObject(with: answer) as? [String: Any] ?? [:]
        if let e = object["error"] { throw Failure(description: "\(name): \(e)") }
        return object
    }
}
