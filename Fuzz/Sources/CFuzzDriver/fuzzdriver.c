#include "fuzzdriver.h"
