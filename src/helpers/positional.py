"""Work in progress: being written (see the issue that owns this module)."""

__all__: list[str] = []
