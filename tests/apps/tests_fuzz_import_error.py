"""An app module whose own code raises as it is imported."""

raise RuntimeError("this module is broken")
