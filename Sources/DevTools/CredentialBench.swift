// SPDX-License-Identifier: Apache-2.0
import Camera
import Credentials
import Crypto
import Foundation
import Glibc
import Kiosk
import Platform
import Policy

/// `kiosk-dev credentials` (make bench-credentials): what one verification costs (Base45, zlib,
/// COSE, the signature, the claims), ES256 and Ed25519, an event ticket (pretix_sig1), and what an idle frame costs with
/// credentials mode on and off (no change expected: the verifier only runs for a code).
///
/// The credentials were minted once by PyPI's cwt (Tests/Peers/credentials.py) with keys made
/// for this bench: exp 2100, aud door-1, no cti (a verification leaves no trace in the store).
public enum CredentialBench {
    static let es256Key = """
-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEJAFfwV6lsXTgDgiBCKG7kJ/+1wQN
R6ZQksFvNPynpVGAlhEqUesCNM80mdMLQA9E+5C3und48bJgbd4Pahb/rg==
-----END PUBLIC KEY-----
"""
    static let ed25519Key = """
-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEA2VnyoS23a1nXdCROMN4SrfuKWLRl3dINA4+bIM3NewI=
-----END PUBLIC KEY-----
"""
    /// An event's key and a ticket minted by pretix 2026.8.0's Sig1TicketSecretGenerator
    /// (Tests/Peers/pretix_tickets.py): item 42/7, subevent 3, valid until 2100. Verified with
    /// KIOSK_TICKET_ENTRIES=0, so a verification leaves no trace in the store.
    static let pretixKey = "LS0tLS1CRUdJTiBQVUJMSUMgS0VZLS0tLS0KTUNvd0JRWURLMlZ3QXlFQTB3cUpTcFZYMWU4cUtZQnp3ZnA0aTlDUTUvYWdBYUhneExxWmdUandNWWs9Ci0tLS0tRU5EIFBVQkxJQyBLRVktLS0tLQo="
    static let pretixTicket = "=0QlupFq25GfG3oEuQhdzQKy8REabiHMWIsUi1VGDZ+zxASP0dkcN84ZOP0GvDkqshOlcXg/3q85qTYrG32qEi2DkmprACjBq+s4AiyAgcAGqAxaGJWSwNVTUxUCKAEAdAQA"
    static let es256Credential = "KC1:NCFOXN*TS0BI$ZDFRH%IAD.BY:GOKDAZG%I6.SA-3H16LPTM5TM88OLCR8-RLAI$V5 042S6KKI7PQ86QBH5NI3YHITU1L*8HU8Y%JS5S 46ZU7I6VN8N95P76F7$VNJU8%FO87L$TOUNFV52TE-G3AN8%XN77QXHB%XSKAF1LE5-O90UB6J JRNQJR$U1Z5 AS5 EO10KPE40"
    static let ed25519Credential = "KC1:NCFOXN*TS0BI% FFRH%IAD.BY:GUJDAZG%I6.SA-3H16LPTM5TM88OLCR8-RLAI$V5 042S6KKI7PQ86QBH5NI3YHITU1L*8+YFZRJ/EJ1257$KNPU9LRUPI6VQ1SDHV2$L6602-X4AGM/HRH:G0MRS:NR%1J4KCVF0Y4*DV3BP-V3A:BO-L3MQRK2AZP-2K$:A+ 38508V320"

    public struct Result: Codable {
        public var es256Us: Double
        public var ed25519Us: Double
        /// Base45 + zlib + COSE parse of the ES256 one, without the signature.
        public var parseUs: Double
        /// An event ticket (pretix_sig1): the whole verification, and the framing
        /// and payload read without the signature.
        public var pretixUs: Double
        public var pretixParseUs: Double
        public var idleFrameUsOff: Double
        public var idleFrameUsOn: Double
        /// One decision of the door's rules: the local time read (localtime_r) and
        /// the rules decided, interface.md's example with 30 closed days; and the rules alone.
        public var accessDecisionUs: Double
        public var accessRulesUs: Double
        /// One pass's verification (the issuer's signature, the claims and the proof;
        /// form 1 with an uncompressed and a compressed point) and form 2's (the proof).
        public var pass1Us: Double = 0
        public var pass1CompressedUs: Double = 0
        public var pass2Us: Double = 0
        /// What a phone not seen before adds to pass1: its point read by OpenSSL.
        public var passPointUs: Double = 0
        public var passCompressedPointUs: Double = 0
        /// A PIN's check as the PIN's gate makes it (two scrypt hashes: the PIN and its duress
        /// code, `PINHasher`'s parameters, LOGN 11), in milliseconds.
        public var pinMs: Double = 0
        public var iterations: Int
    }

    /// interface.md 0.4's example rules (the holidays come from the bench, not a file).
    static let accessRules = """
        schedule office   mon-fri 07:00-19:00, sat 09:00-13:00
        schedule nights   mon-sun 22:00-06:00
        allow  staff      always
        allow  visitor    office
        allow  cleaning   nights   holidays
        lockdown-allow    security
        unlock            office   first=staff
        pretix 42         visitor
        """

    public static func main(_ args: [String]) -> Int32 {
        let json = args.contains("--json")
        var iterations = 2000
        if let i = args.firstIndex(of: "--iterations"), i + 1 < args.count, let n = Int(args[i + 1]), n > 0 { iterations = n }
        do {
            if let i = args.firstIndex(of: "--count") {
                guard i + 1 < args.count, let kind = CountKind(rawValue: args[i + 1]) else {
                    throw CryptoError("--count needs one of \(CountKind.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                try count(kind, iterations: iterations)
                print("counted \(kind.rawValue) \(iterations)")
                return ExitStatus.ok
            }
            let r = try run(iterations: iterations)
            if json {
                let e = JSONEncoder()
                e.outputFormatting = [.sortedKeys]
                print(String(decoding: try e.encode(r), as: UTF8.self))
            } else {
                print("one verification (median of \(r.iterations), release build, this machine):")
                print("  ES256   \(Format.fixed(r.es256Us, 1)) us")
                print("  Ed25519 \(Format.fixed(r.ed25519Us, 1)) us")
                print("  of which Base45 + zlib + COSE parsing \(Format.fixed(r.parseUs, 1)) us")
                print("  pass1   \(Format.fixed(r.pass1Us, 1)) us (\(Format.fixed(r.pass1Us / r.es256Us, 2))x ES256; compressed point \(Format.fixed(r.pass1CompressedUs, 1)) us), a phone seen before")
                let cold = r.pass1Us + r.passPointUs, coldCompressed = r.pass1CompressedUs + r.passCompressedPointUs
                print("          a new phone: + its point \(Format.fixed(r.passPointUs, 1)) us = \(Format.fixed(cold, 1)) us (\(Format.fixed(cold / r.es256Us, 2))x); "
                      + "compressed + \(Format.fixed(r.passCompressedPointUs, 1)) us = \(Format.fixed(coldCompressed, 1)) us (\(Format.fixed(coldCompressed / r.es256Us, 2))x)")
                print("  pass2   \(Format.fixed(r.pass2Us, 1)) us (\(Format.fixed(r.pass2Us / r.es256Us, 2))x ES256)")
                print("  an event ticket (pretix_sig1, Ed25519) \(Format.fixed(r.pretixUs, 1)) us, of which framing + protobuf \(Format.fixed(r.pretixParseUs, 2)) us")
                print("an idle frame (640x480, no code), ScanService.process:")
                print("  credentials off \(Format.fixed(r.idleFrameUsOff, 1)) us, on \(Format.fixed(r.idleFrameUsOn, 1)) us")
                print("a PIN's check (two scrypt hashes: the PIN and its duress code; LOGN \(PINHasher.defaultLogN), r \(PINHasher.r), p \(PINHasher.p)):")
                print("  \(Format.fixed(r.pinMs, 2)) ms")
                print("one decision of the door's rules (interface.md's example, 30 closed days):")
                print("  local time + rules \(Format.fixed(r.accessDecisionUs, 3)) us, the rules alone \(Format.fixed(r.accessRulesUs, 3)) us")
            }
            return ExitStatus.ok
        } catch {
            DevCommand.printError("kiosk-dev credentials: \(error)")
            return ExitStatus.failure
        }
    }

    static func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

    /// What `--count` repeats: a KC1 credential (ES256), a pass (form 1 with an uncompressed or a
    /// compressed point, its phone seen before; form 2), a new phone's point read alone, or a
    /// PIN's check as the PIN's gate makes it (a wrong PIN: both hashes, the PIN's and its plus1
    /// duress code's, as every check computes) with the hash at LOGN 11 (`pin set`'s), 10 or 12.
    enum CountKind: String, CaseIterable {
        case kc1, pass1, pass1Compressed = "pass1-compressed", pass2, point, pointCompressed = "point-compressed"
        case pin, pinLogN10 = "pin-logn10", pinLogN12 = "pin-logn12"
    }

    /// A subject's line with a hash at `logN` (a fixed salt and key: the check's cost does not
    /// depend on them) and the PIN checked against it.
    static func pinEntry(logN: Int) -> PinsEntry {
        PinsEntry(subject: "bench", hash: PINHash(logN: logN, r: PINHasher.r, p: PINHasher.p, salt: [UInt8](repeating: 7, count: 16),
                                                  key: [UInt8](repeating: 9, count: 32)), line: 1)
    }

    /// One PIN's check, as PINGate makes it (`PINJudgement` with the scrypt of `PINGate.matches`).
    static func checkPIN(_ entry: PinsEntry) -> PINResult {
        PINJudgement.judge(PINDigits([5, 8, 2, 0]), entry, duress: .plus1) { PINGate.matches($0, $1) }
    }

    /// `--count KIND --iterations N`: only KIND's verification, N times after a first, with no
    /// clock read, for counting instructions under qemu-aarch64 (`make bench-credentials-arm64`):
    /// the count of a run of N minus that of a run of M, over N - M, is one verification's.
    static func count(_ kind: CountKind, iterations: Int) throws {
        try Crypto.load()
        let dir = NSTemporaryDirectory() + "kiosk-bench-count-\(getpid())"
        mkdir(dir, 0o700)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        switch kind {
        case .kc1:
            let keys = [TrustedKey(kid: Array("bench-es".utf8), key: try PublicKey(pem: Array(es256Key.utf8)), file: "bench-es.pem")]
            let verifier = CredentialVerifier(prefix: "KC1:", rules: CredentialRules(issuers: ["bench"], audience: "door-1", skewSeconds: 30,
                                                                                     requireSyncedClock: false),
                                              antipassbackSeconds: 0, trust: CredentialTrust(keys: keys),
                                              store: UsedTokenStore(directory: dir), clock: MonotonicClock())
            let payload = Array(es256Credential.utf8)
            for _ in 0...iterations where !verifier.verify(payload).granted { throw CryptoError("the bench's credential was refused") }
        case .pass1, .pass1Compressed, .pass2:
            try PassBench.repeatVerification(kind == .pass2 ? PassBench.form2 : kind == .pass1 ? PassBench.form1 : PassBench.form1Compressed,
                                             iterations: iterations, directory: dir)
        case .point, .pointCompressed:
            let sec1 = try PassBench.point(kind == .point ? PassBench.form1 : PassBench.form1Compressed)
            for _ in 0...iterations { _ = try PublicKey(p256Point: sec1) }
        case .pin, .pinLogN10, .pinLogN12:
            let entry = pinEntry(logN: kind == .pin ? PINHasher.defaultLogN : kind == .pinLogN10 ? 10 : 12)
            for _ in 0...iterations where checkPIN(entry) != .wrong { throw CryptoError("the bench's PIN was not judged wrong") }
        }
    }

    public static func run(iterations: Int) throws -> Result {
        try Crypto.load()
        let dir = NSTemporaryDirectory() + "kiosk-bench-credentials-\(getpid())"
        mkdir(dir, 0o700)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let keys = [TrustedKey(kid: Array("bench-es".utf8), key: try PublicKey(pem: Array(es256Key.utf8)), file: "bench-es.pem"),
                    TrustedKey(kid: Array("bench-ed".utf8), key: try PublicKey(pem: Array(ed25519Key.utf8)), file: "bench-ed.pem")]
        let pem = Base64.decode(pretixKey) ?? []
        let ticketKeys = [TicketKey(name: "bench", key: try PublicKey(pem: pem), file: "bench.pem", form: "base64 of PEM")]
        let verifier = CredentialVerifier(prefix: "KC1:", rules: CredentialRules(issuers: ["bench"], audience: "door-1", skewSeconds: 30,
                                                                                 requireSyncedClock: false, ticketEntries: 0),
                                          antipassbackSeconds: 0, trust: CredentialTrust(keys: keys, ticketKeys: ticketKeys),
                                          store: UsedTokenStore(directory: dir), clock: MonotonicClock())
        func time(_ payload: [UInt8]) throws -> Double {
            let first = verifier.verify(payload)
            guard first.granted else { throw CryptoError("the bench's credential was refused: \(first.reason.rawValue)") }
            var samples: [Double] = []
            for _ in 0..<iterations {
                let t0 = monotonicNanoseconds()
                _ = verifier.verify(payload)
                samples.append(Double(monotonicNanoseconds() - t0) / 1e3)
            }
            return median(samples)
        }
        let es = Array(es256Credential.utf8), ed = Array(ed25519Credential.utf8)
        let esUs = try time(es), edUs = try time(ed)
        let ticket = Array(pretixTicket.utf8)
        let ticketUs = try time(ticket)
        var ticketParse: [Double] = []
        for _ in 0..<iterations {
            let t0 = monotonicNanoseconds()
            if let s = PretixSecret(ticket) { _ = try? PretixTicket(payload: s.payload) }
            ticketParse.append(Double(monotonicNanoseconds() - t0) / 1e3)
        }
        var parse: [Double] = []
        for _ in 0..<iterations {
            let t0 = monotonicNanoseconds()
            _ = try? COSESign1(CredentialVerifier.coseBytes(es.dropFirst(4)) ?? [])
            parse.append(Double(monotonicNanoseconds() - t0) / 1e3)
        }
        // Idle frames: the same empty picture through the frame loop's steps.
        func idle(_ worker: CredentialWorker?) -> Double {
            var config = Configuration()
            if worker != nil { config.verdict = .credentials }
            let source = IdleSource()
            let service = ScanService(configuration: config, source: source, features: ScanFeatures(credentials: worker), logger: Logger(level: .error) { _ in }, stop: StopSignal(), clock: MonotonicClock())
            var samples: [Double] = []
            for i in 0..<max(200, iterations / 4) {
                let frame = Frame(luma: source.plane, sequence: UInt64(i), timestampNs: UInt64(i) * 33_333_333, capturedNs: monotonicNanoseconds())
                let t0 = monotonicNanoseconds()
                service.process(frame)
                samples.append(Double(monotonicNanoseconds() - t0) / 1e3)
            }
            return median(Array(samples.dropFirst(20)))
        }
        // The door's rules: batches of 1000 decisions (one is under the clock's resolution).
        let start = LocalDate(year: 2026, month: 1, day: 1)
        let door = DoorRules(path: "bench", rules: try AccessRules.parse(accessRules),
                             holidays: Set((0..<30).map { start.adding(days: $0 * 12) }))
        let groups = ["cleaning", "visitor"], now = Int64(Glibc.time(nil))
        var sink = 0
        func perDecision(_ decide: (Int) -> AccessReason) -> Double {
            var samples: [Double] = []
            for b in 0..<max(20, iterations / 50) {
                let t0 = monotonicNanoseconds()
                for i in 0..<1000 where decide(b * 1000 + i) == .granted { sink &+= 1 }
                samples.append(Double(monotonicNanoseconds() - t0) / 1e6)
            }
            return median(samples)
        }
        let accessUs = perDecision { door.decide(groups: groups, now: now + Int64($0 * 61), clockSynced: true) }
        let rulesUs = perDecision { door.rules.decide(groups: groups, at: WallClock(date: start.adding(days: $0 % 400), minute: ($0 * 7) % 1440),
                                                      holidays: door.holidays, clockSynced: true) }
        if sink < 0 { print(sink) }
        let off = idle(nil)
        let worker = CredentialWorker(verifier: verifier)
        let on = idle(worker)
        worker.shutDown()
        let passes = try PassBench.run(iterations: iterations, median: median)
        // A PIN's check: tens of milliseconds each, so fewer of them.
        let entry = pinEntry(logN: PINHasher.defaultLogN)
        var pinSamples: [Double] = []
        for _ in 0..<max(5, iterations / 100) {
            let t0 = monotonicNanoseconds()
            guard checkPIN(entry) == .wrong else { throw CryptoError("the bench's PIN was not judged wrong") }
            pinSamples.append(Double(monotonicNanoseconds() - t0) / 1e6)
        }
        return Result(es256Us: esUs, ed25519Us: edUs, parseUs: median(parse), pretixUs: ticketUs, pretixParseUs: median(ticketParse),
                      idleFrameUsOff: off, idleFrameUsOn: on,
                      accessDecisionUs: accessUs, accessRulesUs: rulesUs, pass1Us: passes.form1Us, pass1CompressedUs: passes.form1CompressedUs,
                      pass2Us: passes.form2Us, passPointUs: passes.pointUs, passCompressedPointUs: passes.compressedPointUs,
                      pinMs: median(pinSamples), iterations: iterations)
    }
}

/// A camera that shows an empty grey 640x480 picture (only its plane is used).
final class IdleSource: FrameSource {
    let pixels: UnsafeMutablePointer<UInt8> = {
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: 640 * 480)
        p.initialize(repeating: 128, count: 640 * 480)
        return p
    }()
    deinit { pixels.deallocate() }
    var plane: LumaPlane { LumaPlane(base: pixels, width: 640, height: 480, rowStride: 640) }
    func open() throws -> CameraDescription { CameraDescription(device: "idle", format: "GREY", width: 640, height: 480, fps: 30) }
    func nextFrame(timeoutMs: Int) throws -> FrameWait { .timedOut }
    func close() {}
    var skippedFrames: Int { 0 }
    var exposure: CameraExposure? { nil }
    var lux: Double? { nil }
}
