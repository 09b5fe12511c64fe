// SPDX-License-Identifier: Apache-2.0
import Foundation
import Commands

exit(KioskCommand.main(arguments: CommandLine.arguments, environment: ProcessInfo.processInfo.environment))
