"""The recorder's typestore: ``ident_msgs/msg/ExcitationTrajectory`` from the ament index, the
definition rosidl generated its type support from."""
import json
from pathlib import Path

from ament_index_python.packages import get_package_share_directory

from ident_core.data.bag.writer import recording_typestore as typestore_of
from ident_ros.typestore import excitation_msg_path, recording_typestore

SOURCE_MSG = Path(__file__).resolve().parents[2] / 'ident_msgs' / 'msg' / 'ExcitationTrajectory.msg'


def test_excitation_type_hash_matches_rosidl():
    """The registered definition is the one rosidl generated (same RIHS01 type hash), and the
    source tree's (which the core's tests write with) is the same."""
    typestore = recording_typestore()
    generated = json.loads((Path(get_package_share_directory('ident_msgs')) / 'msg'
                            / 'ExcitationTrajectory.json').read_text())
    expected = next(h['hash_string'] for h in generated['type_hashes']
                    if h['type_name'] == 'ident_msgs/msg/ExcitationTrajectory')
    assert typestore.hash_rihs01('ident_msgs/msg/ExcitationTrajectory') == expected
    assert excitation_msg_path().read_text() == SOURCE_MSG.read_text()
    assert typestore_of(SOURCE_MSG).hash_rihs01('ident_msgs/msg/ExcitationTrajectory') \
        == expected
