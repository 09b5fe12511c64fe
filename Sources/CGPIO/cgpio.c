#include "cgpio.h"
