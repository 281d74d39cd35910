"""The checkers' messages, one module per checker module (:mod:`helpers.exercises.ch01` reads
``helpers.exercises.catalogue.ch01``), each ``MESSAGES = {key: {language: template}}`` in English
and Chinese, registered in :data:`helpers.exercises.messages.CATALOGUE` when imported. A translator
edits these files only (``zh/TRANSLATING.md``)."""
