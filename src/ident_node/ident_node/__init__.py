"""ident_node ROS 2 node package."""
