"""The user decision model: situations (matchers) linked to preferences
(predictions) whose Bayesian confidence only the user's feedback moves."""
