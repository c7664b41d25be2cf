"""The prediction log's reading side: Prediction blocks in a text, and a transcript's rows.

:mod:`thatch.predlog.blocks` finds the Predictions a text states (fenced YAML
blocks of six shapes, or a legacy ``Confidence: N`` line);
:mod:`thatch.predlog.transcript` turns a transcript's texts into rows with
stable ids (copies and unreadable sub-agent blocks left out). The reading
rules are in docs/prediction-log.md.
"""
