"""The run loop, stages, dispatch, hooks, stop conditions and experiments."""
