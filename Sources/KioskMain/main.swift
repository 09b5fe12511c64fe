// SPDX-License-Identifier: Apache-2.0
import Commands
import Glibc
import Platform

exit(KioskCommand.main(arguments: CommandLine.arguments, environment: Files.environment()))
