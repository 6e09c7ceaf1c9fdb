"""PR Planner's desktop app (PySide6 + pyqtgraph) on top of the headless ``core``.

Importing this package does not import Qt: ``desktop.launch`` must be able to dispatch
headless subcommands without loading PySide6.
"""
