"""The ROS context of the node tests in this process."""
import pytest


@pytest.fixture
def ros():
    """(rclpy, context) in a ROS domain of its own with loopback discovery, shut down
    afterwards."""
    import rclpy

    from ident_ros.testing import isolated_context

    with isolated_context() as context:
        yield rclpy, context
