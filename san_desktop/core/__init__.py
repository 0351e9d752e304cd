"""Qt-free and database-free building blocks: enums, ids, errors, paths, text helpers."""
