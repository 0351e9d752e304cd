"""Scrapped links: downloading a page within bounds and taking its readable article. No Qt, no database."""
