"""``thatch migrate``: a home's whole data copied from one storage backend to another.

:mod:`thatch.migrate.places` reads ``--from`` and ``--to`` and opens each
end through the plugins; :mod:`thatch.migrate.copy` copies the parts
through the storage contracts, idempotently, and counts them.
"""

from thatch.migrate.copy import PARTS, PartCount, migrate

__all__ = ["PARTS", "PartCount", "migrate"]
