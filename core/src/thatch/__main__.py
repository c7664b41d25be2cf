"""``python -m thatch`` runs the command line."""

from thatch.cli import console_main

console_main()
