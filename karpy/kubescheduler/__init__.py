"""kubescheduler."""
