"""The main screen's live panels and the strips above them, one widget a file.

A panel reads a `View` (`tutor.view`: the trace of the last pass, the step, token and head the
learner is at, the language) and draws it in `show(view)`; it never runs the model and never changes
where the learner is (at most it keeps the last View, to draw it again at a new width). The main screen
makes one View per key and hands it to every panel it shows. General widgets, which know nothing of
a View (heatmap, line chart, the lesson pane, footer, tabs, the step bar), are in `tutor/widgets/`.
"""
