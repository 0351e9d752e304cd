"""The recovery sweep (``sweep``) and the product's hooks it runs (``hooks``)."""
