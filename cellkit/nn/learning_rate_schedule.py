"""``cellkit.nn.learning_rate_schedule``: learning-rate schedules as Cells (MindSpore's module path)."""

__all__ = []
