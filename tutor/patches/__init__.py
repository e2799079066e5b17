"""Workarounds for Textual and Rich (and the exercise checker's confinement), one mechanism a module; README.md
says what each patches and why. Process settings that patch no library are in tutor/process_tuning.py.

Each relies on private names of a pinned version; tests/test_patched_names.py checks every one of them by
name, so raising the Textual or Rich pin fails there, with the reason, before it fails on screen.
"""
