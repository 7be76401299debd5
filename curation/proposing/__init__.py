"""Proposing: the engine's output (:mod:`curation.matching`) diffed against
the applied state, as drafts and then stored proposals.

Imports go one way: proposing reads the engine, the models and
:mod:`curation.selectors`; deciding (:mod:`curation.deciding`) and the
matching run (:mod:`curation.matching_run`) read proposing, never the other
way (tests/test_import_layers.py).
"""
