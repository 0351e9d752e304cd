"""Database: engine (driver choice, sqlite-vec, pragmas), typed models, migrate-on-start, vectors."""
