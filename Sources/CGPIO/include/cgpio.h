/* placeholder, replaced by the shim */
