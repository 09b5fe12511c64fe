// SPDX-License-Identifier: Apache-2.0

/// The broker link's counters: what it has done since start, `queued` and `connected` now. The
/// link keeps them; `stats` and the metrics file show them.
public struct BrokerCounters: Equatable, Sendable {
    /// Scan events sent (a resend after a reconnect counts again).
    public var published: Int
    /// Scan events the broker acknowledged (PUBACK).
    public var acknowledged: Int
    /// Scan events waiting: spooled, not yet acknowledged.
    public var queued: Int
    /// Scan events dropped because the queue was full (the oldest go first).
    public var dropped: Int
    public var connected: Bool
    /// Connections made since start.
    public var connections: Int

    public init(published: Int = 0, acknowledged: Int = 0, queued: Int = 0, dropped: Int = 0, connected: Bool = false,
                connections: Int = 0) {
        self.published = published
        self.acknowledged = acknowledged
        self.queued = queued
        self.dropped = dropped
        self.connected = connected
        self.connections = connections
    }
}
