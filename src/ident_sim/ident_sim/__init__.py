"""ident_sim ROS 2 node package."""
