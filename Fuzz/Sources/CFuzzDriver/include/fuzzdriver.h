// SPDX-License-Identifier: Apache-2.0
/* libFuzzer's entry for programs that have a main of their own (SwiftPM gives every executable
 * one): the fuzz targets' main hands argc/argv and the test function to it. */
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
