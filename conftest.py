"""Registers balgen's fill plugin for the fillers in `fillers/`."""

pytest_plugins = ["balgen.plugin"]
