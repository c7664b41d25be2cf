"""A backend's whole storage contract run, written as its third-party author would."""

from thatch.testing.contracts import StorageContract
from thatch_sqlite.storage import SQLiteStorage


class TestSQLiteStorage(StorageContract):
    def open_backend(self, directory):
        return SQLiteStorage(directory / "thatch.db")
