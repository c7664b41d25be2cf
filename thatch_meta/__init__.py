"""The thatch meta-distribution: it installs thatch-core with the default plugins."""
