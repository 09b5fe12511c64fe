// SPDX-License-Identifier: Apache-2.0
import CPlatform

/// Who is at the other end of a connected Unix socket (SO_PEERCRED): its user id and process
/// id, or nil when the kernel does not say.
public func peerCredentials(_ fd: Int32) -> (uid: UInt32, pid: Int32)? {
    var uid: UInt32 = 0, pid: Int32 = 0
    return kiosk_peer_credentials(fd, &uid, &pid) == 0 ? (uid, pid) : nil
}
