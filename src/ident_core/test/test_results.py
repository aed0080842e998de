"""RESULT.yaml (estimation.results): what is written reads back as the same model, files of the
earlier vocabulary still load, and a damaged file is refused naming the field."""
import numpy as np
import pytest
import yaml
from helpers import load_error

from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.identification import identify, validate
from ident_core.estimation.results import read_result, result_file


@pytest.fixture(scope='module')
def written(six_axis, make_synthetic, tmp_path_factory):
    model = identify(six_axis, [make_synthetic(seed=3)], IdentificationConfig(rotor_inertia=True))
    check = validate(model, make_synthetic(seed=4))
    path = tmp_path_factory.mktemp('result') / 'RESULT.yaml'
    result_file(model, [check.report()]).write(path)
    return model, path


def test_written_result_reads_back_as_the_same_model(written, make_synthetic):
    model, path = written
    again = read_result(path)
    assert again.config == model.config
    np.testing.assert_array_equal(again.values, model.values)
    np.testing.assert_array_equal(again.std, model.std)
    assert again.base.names == model.base.names
    assert again.actuator_values() == model.actuator_values()
    data = make_synthetic(seed=4)
    np.testing.assert_array_equal(validate(again, data).predicted, validate(model, data).predicted)


def test_earlier_vocabulary_still_loads(written, tmp_path):
    model, path = written
    doc = yaml.safe_load(path.read_text())
    doc['settings'] = {**doc.pop('config'), 'friction': 'viscous-coulomb-offset'}
    old = tmp_path / 'old.yaml'
    old.write_text(yaml.safe_dump(doc))
    again = read_result(old)
    assert again.config.friction == 'coulomb-viscous-offset'
    np.testing.assert_array_equal(again.values, model.values)


@pytest.mark.parametrize('damage, words', [
    (lambda d: d['config'].update(estimator='lasso'), ['config.estimator', 'lasso']),
    (lambda d: d['base_definition'].pop('k_d'), ['missing field base_definition.k_d']),
    (lambda d: d['base_parameters'].pop(), ['base_parameters', 'base_definition']),
    (lambda d: d.update(format='robot-ident/result/0'), ['not a robot-ident result']),
], ids=['estimator', 'k_d', 'parameter-count', 'format'])
def test_damaged_result_names_file_and_field(written, tmp_path, damage, words):
    _, path = written
    doc = yaml.safe_load(path.read_text())
    damage(doc)
    message = load_error(read_result, doc, tmp_path / 'bad.yaml')
    for word in words:
        assert word in message, message
