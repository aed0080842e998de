"""The ROS context of the node tests in this process."""
import os
import random

import pytest

#: A ROS domain of this test process alone.
DOMAIN = 100 + (random.randrange(90) + os.getpid()) % 90


@pytest.fixture
def ros():
    """(rclpy, context) in ``DOMAIN`` with loopback discovery, shut down afterwards."""
    import rclpy

    from ident_ros.testing import isolated_context

    with isolated_context(DOMAIN) as context:
        yield rclpy, context
