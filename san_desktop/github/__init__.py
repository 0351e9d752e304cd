"""Committing TILs: the GitHub REST client (httpx) and the local git target (dulwich). No Qt, no database."""
