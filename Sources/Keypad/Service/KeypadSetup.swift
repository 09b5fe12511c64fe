// SPDX-License-Identifier: Apache-2.0
import Credentials
import GPIO
import Keypad
import Platform
import Policy

/// The keypad's part of the service (interface.md 0.6): the keypad itself (`KIOSK_KEYPAD`), the
/// pins file (`KIOSK_PINS_FILE`, or a site bundle's `pins`; reloaded on SIGHUP, a bad one keeps
/// the old), and the PIN's gate between the verifier and the door. In OSDP mode the keys go to the
/// controller instead (osdp_KEYPAD), and no PIN is checked here.
public enum KeypadSetup {
    public struct Parts {
        /// The PIN's step (credentials mode); nil in OSDP mode and without a verifier.
        let gate: PINGate?
        let keypad: Keypad?

        func shutDown() { keypad?.shutDown() }
    }

    /// The keypad started and the gate made; exit 78 for a pins file that does not read, 69 for a
    /// keypad's lines that cannot be had. Nil when there is nothing to do (no verifier, no keypad).
    static func assemble(_ a: Assembly, lines: OutputLines, credentials: CredentialWorker?, bundles: SiteBundles?,
                         osdp: OSDPReader?) throws -> Parts? {
        let keypad = try open(a, lines: lines)
        if let osdp, a.config.isOSDP {
            keypad?.start(OSDPKeys(osdp))
            return keypad.map { Parts(gate: nil, keypad: $0) }
        }
        guard let credentials else {
            if keypad != nil { a.logger.warning("keypad_unused", ["reason": "a PIN is checked only with KIOSK_VERDICT=credentials"]) }
            return nil
        }
        let configured = a.config.pinsFile
        let path: @Sendable () -> String = { bundles?.sources.pinsFile ?? configured }
        let pins: PinsFile
        do {
            pins = try load(path()) ?? PinsFile()
        } catch {
            a.logger.error("config_error", ["var": "KIOSK_PINS_FILE", "value": .text(path()), "expected": .text(String(describing: error))])
            keypad?.shutDown()
            throw ServiceExit(ExitStatus.config)
        }
        let verifier = credentials.verifier
        let door = lines.door
        let gate = PINGate(config: a.config, pins: pins, worker: credentials,
                           rulesInForce: { verifier.currentTrust.access != nil }, clock: a.clock, logger: a.logger,
                           prompt: { door.prompt(.pinPrompt, for: "pin") })
        a.logger.info("pins", ["file": .text(path()), "subjects": .int(pins.count), "keypad": .text(keypad?.description ?? "none"),
                               "window_s": .int(a.config.pinWindowS), "duress": .text(a.config.duressCode.rawValue)])
        let reload: @Sendable () throws -> String = {
            guard let file = try load(path()) else { gate.replace(PinsFile()); return "subjects=0" }
            gate.replace(file)
            return "subjects=\(file.count)"
        }
        a.reloadables.add("pins", reload)
        let logger = a.logger
        bundles?.afterApply {
            do { logger.info("reloaded", ["what": "pins", "via": "bundle", "holds": .text(try reload())]) } catch {
                logger.error("reload_failed", ["what": "pins", "via": "bundle", "error": .text(String(describing: error))])
            }
        }
        keypad?.start(gate)
        return Parts(gate: gate, keypad: keypad)
    }

    /// The keypad `KIOSK_KEYPAD` names, not yet started (nil: none).
    static func open(_ a: Assembly, lines: OutputLines) throws -> Keypad? {
        switch a.config.keypad {
        case nil:
            return nil
        case .evdev(let path):
            return EvdevKeypad(path: path)
        case .wiegand(let d0, let d1):
            do {
                if a.config.isSimulatedGPIO {
                    let chip = lines.simulatedChip ?? SimulatedChip()
                    let keypad = try WiegandKeypad(chip: chip, d0: d0, d1: d1)
                    // The simulated lines' feed runs once: here when the door's inputs do not start it.
                    if lines.watch == nil { SimulatedInputFeed.start(chip: chip, config: a.config, logger: a.logger) }
                    return keypad
                }
                return try WiegandKeypad(chip: LibgpiodChip(a.config.gpioChip), d0: d0, d1: d1)
            } catch {
                KioskService.logGPIOError(error, logger: a.logger)
                throw ServiceExit(ExitStatus.unavailable)
            }
        }
    }

    /// The pins file, or nil when there is none; throws with its path and the line that does not read.
    public static func load(_ path: String) throws -> PinsFile? {
        guard let bytes = try SmallFile.read(path, limit: PinsFile.maxBytes) else { return nil }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw SmallFile.Failure(description: "\(path): not UTF-8 text") }
        do throws(PinsFileError) {
            return try PinsFile.parse(text)
        } catch {
            throw SmallFile.Failure(description: "\(path): \(error.description)")
        }
    }
}

/// The keypad's keys to the access controller (OSDP mode).
final class OSDPKeys: KeypadListener, @unchecked Sendable {
    let osdp: OSDPReader
    init(_ osdp: OSDPReader) { self.osdp = osdp }
    func keyPressed(_ key: KeypadKey) { osdp.keyPressed(key.osdpByte) }
    func keypadReady(_ what: String) { osdp.logger.info("keypad", ["state": "ready", "keypad": .text(what)]) }
    func keypadLost(_ why: String) { osdp.logger.warning("keypad", ["state": "lost", "error": .text(why)]) }
}
