// SPDX-License-Identifier: Apache-2.0
import DevTools
import Glibc

exit(DevCommand.main(arguments: CommandLine.arguments))
