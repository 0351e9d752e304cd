"""Package discovery for setuptools (all other metadata is in pyproject.toml).

Every package under san_desktop/ is found, not listed, so a new subpackage can never be missing from an
installed app. migrations/ and resources/ are top-level folders in the house layout that ship inside the
package; their subfolders are discovered the same way (namespace packages included, so data folders such
as resources/icons are packages too and need no listing).
"""

from setuptools import find_namespace_packages, setup

# import name -> folder in this checkout
MAPPED = {"san_desktop.migrations": "migrations", "san_desktop.resources": "resources"}

packages = find_namespace_packages(include=["san_desktop", "san_desktop.*"])
package_dir = {}
for name, folder in MAPPED.items():
    packages.append(name)
    package_dir[name] = folder
    for sub in find_namespace_packages(where=folder, exclude=["__pycache__", "*.__pycache__"]):
        packages.append(f"{name}.{sub}")
        package_dir[f"{name}.{sub}"] = f"{folder}/{sub.replace('.', '/')}"

setup(packages=sorted(packages), package_dir=package_dir)
