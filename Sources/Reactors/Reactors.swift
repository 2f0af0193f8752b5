// Reactors: see the issue that builds this module.
