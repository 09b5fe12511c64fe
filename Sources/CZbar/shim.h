// SPDX-License-Identifier: Apache-2.0
#include <zbar.h>

/* zbar_fourcc() is a function-like macro, which Swift does not import: 8-bit greyscale. */
static const unsigned long KIOSK_ZBAR_Y800 = zbar_fourcc('Y', '8', '0', '0');
