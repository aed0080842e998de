"""Pure-Python core of the robot dynamic parameter identification suite (no rclpy)."""

__version__ = '0.1.0'
