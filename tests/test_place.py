"""The record of where the learner is, and its moves — without the app (milliseconds each)."""

from __future__ import annotations

import pytest
from helpers import TOKENIZER, random_params, small_config

from model import GPT
from tutor.place import Place
from tutor.view import BACKWARD, FORWARD


def tiny_gpt(config) -> GPT:  # type: ignore[no-untyped-def]
    return GPT(config, random_params(config), TOKENIZER, name="test")


@pytest.fixture(scope="module")
def gpt() -> GPT:
    return tiny_gpt(small_config(n_layers=3))


@pytest.fixture
def place(gpt: GPT) -> Place:
    p = Place(gpt, home_gpt=gpt)
    p.receive(gpt.run("猫追狗的"), "猫追狗的")
    return p


def names(place: Place) -> list[str]:
    assert place.trace is not None
    return [s.name for s in place.trace.steps]


def test_nothing_moves_before_a_pass_has_come(gpt: GPT) -> None:
    p = Place(gpt, home_gpt=gpt)
    assert p.view("en") is None
    assert not p.step_by(1) and not p.block_by(1) and not p.first_step() and not p.move_token(1)
    assert p.goto_step("blocks.1.ln2")  # kept for the pass on its way
    assert p.pending_step == "blocks.1.ln2"
    assert p.receive(gpt.run("猫追"), "猫追") is None
    assert p.step is not None and p.step.name == "blocks.1.ln2" and p.pending_step is None


def test_steps_are_clamped_at_both_ends(place: Place) -> None:
    n = len(names(place))
    assert place.step_by(-1) and place.step_index == 0
    place.last_step()
    assert place.step_index == n - 1
    place.step_by(5)
    assert place.step_index == n - 1


def test_backwards_the_keys_run_from_the_unembedding_to_the_embedding(place: Place) -> None:
    place.go(4)
    place.turn()
    assert place.direction == BACKWARD and place.view("en").backward  # type: ignore[union-attr]
    assert place.step_index == 4  # turning round keeps the step
    place.step_by(1)
    assert place.step_index == 3
    place.first_step()
    assert names(place)[place.step_index] == "unembed"
    place.last_step()
    assert place.step_index == 0
    place.turn()
    assert place.direction == FORWARD and place.step_index == 0
    place.turn()  # from the embedding, the first forward step: backwards starts where the gradient does
    assert names(place)[place.step_index] == "unembed"
    place.turn()
    assert place.step_index == 0  # and turning again is back at the embedding


def test_backwards_the_cursor_leaves_the_last_token_which_no_gradient_reaches(place: Place) -> None:
    assert place.token == 3
    place.turn()
    assert place.token == 2
    place.move_token(1)
    place.turn()
    place.turn()
    assert place.token == 2
    place.receive(place.gpt.run("猫追狗的一是"), "猫追狗的一是")  # typed on, backwards: the last scored token
    assert place.token == 4


def test_block_keys_forward_go_to_each_blocks_first_step(place: Place) -> None:
    seen = []
    for _ in range(5):
        place.block_by(1)
        seen.append(names(place)[place.step_index])
    assert seen == ["blocks.0.ln1", "blocks.1.ln1", "blocks.2.ln1", "unembed", "unembed"]
    place.block_by(-1)
    assert names(place)[place.step_index] == "blocks.2.ln1"


def test_block_keys_backward_go_to_each_blocks_last_step(place: Place) -> None:
    place.turn()
    place.first_step()
    seen = []
    for _ in range(5):
        place.block_by(1)
        seen.append(names(place)[place.step_index])
    assert seen == ["blocks.2.mlp_add", "blocks.1.mlp_add", "blocks.0.mlp_add", "embed", "embed"]
    place.block_by(-1)
    assert names(place)[place.step_index] == "blocks.0.mlp_add"
    assert place.goto_block(1) and names(place)[place.step_index] == "blocks.1.mlp_add"
    assert not place.goto_block(7)


def test_a_growing_prompt_keeps_the_cursor_on_the_last_token(place: Place, gpt: GPT) -> None:
    assert place.token == 3
    place.receive(gpt.run("猫追狗的一是"), "猫追狗的一是")
    assert place.token == 5
    place.move_token(-2)
    place.receive(gpt.run("猫追狗的一是在"), "猫追狗的一是在")
    assert place.token == 3  # not at the end: it stays
    place.receive(gpt.run("猫"), "猫")
    assert place.token == 0


def test_a_link_waits_for_the_prompt_it_brings(place: Place, gpt: GPT) -> None:
    assert place.show({"step": "blocks.0.attn", "token": "-1", "head": "3", "prompt": "猫追狗的一"}) is None
    assert place.pending_step == "blocks.0.attn" and place.pending_token == -1
    assert place.head == 3 % gpt.config.n_heads
    place.receive(gpt.run("猫追狗的一"), "猫追狗的一")
    assert names(place)[place.step_index] == "blocks.0.attn" and place.token == 4
    assert place.show({"step": "no.such.step"}) == "no.such.step"
    assert place.show({"token": "1"}) is None and place.token == 1


def test_a_link_naming_a_step_but_no_direction_reads_forwards(place: Place, gpt: GPT) -> None:
    """Lesson 9's walk turns backwards; the next lesson's links name forward steps and showed them backwards."""
    place.receive(gpt.run("猫追狗"), "猫追狗")
    place.show({"direction": "backward", "step": "unembed"})
    assert place.direction == BACKWARD
    place.show({"token": "1"})  # no step: the direction stays
    assert place.direction == BACKWARD
    place.show({"step": "blocks.0.ln1"})
    assert place.direction == FORWARD and names(place)[place.step_index] == "blocks.0.ln1"


def test_a_pending_step_the_model_lacks_is_reported(place: Place, gpt: GPT) -> None:
    place.pending_step = "blocks.9.ln1"
    assert place.receive(gpt.run("猫追"), "猫追") == "blocks.9.ln1"
    assert place.pending_step is None


def test_switching_model_drops_the_pass_and_the_head(place: Place, gpt: GPT) -> None:
    other = tiny_gpt(small_config(n_layers=1, n_heads=1))
    place.move_head(1)
    place.last_step()
    place.use_model(other)
    assert place.trace is None and place.head == 0
    place.receive(other.run("猫追"), "猫追")
    assert place.step_index == len(names(place)) - 1  # clamped to the smaller model's pass
    place.move_head(1)
    assert place.head == 0


# -- sampling the next token ------------------------------------------------------------------------------


def test_temperature_and_top_k_move_along_their_steps_and_stop_at_the_ends(place: Place) -> None:
    from tutor.draw_settings import TEMPERATURES, TOP_KS

    assert (place.sampling.temperature, place.sampling.top_k) == (1.0, None)  # the model's own distribution
    seen = [place.sampling.temperature]
    while place.temperature_by(1):
        seen.append(place.sampling.temperature)
    assert seen == list(TEMPERATURES[TEMPERATURES.index(1.0) :])
    assert not place.temperature_by(1) and place.sampling.temperature == TEMPERATURES[-1]
    while place.temperature_by(-1):
        pass
    assert place.sampling.temperature == 0.0
    assert not place.top_k_by(1)  # "all" is the top
    assert place.top_k_by(-1) and place.sampling.top_k == 50
    while place.top_k_by(-1):
        pass
    assert place.sampling.top_k == TOP_KS[0] == 1
    assert place.view("en").sampling is place.sampling  # the panels read it from the view


def test_draws_are_numbered_and_a_drawn_pass_puts_the_cursor_on_the_new_token(place: Place, gpt: GPT) -> None:
    from tutor.draw_settings import Sampled

    assert [place.draw(), place.draw()] == [0, 1] and place.sampling.draws == 2
    place.token = 0
    longer = gpt.extend(place.trace, 5)
    drawn = Sampled(2, 5, gpt.tokenizer.piece(5), 0.1, 0.2, 1.0, None, computed=1, kept=4)
    place.receive(longer, "猫追狗的" + gpt.tokenizer.decode([5]), drawn)
    assert place.token == 4 and place.sampling.last == drawn
    place.receive(longer, place.prompt)  # the same prompt again (say with its gradients): still the drawn one
    assert place.sampling.last == drawn
    place.receive(gpt.run("猫追"), "猫追")  # typed: its last token was not drawn
    assert place.sampling.last is None and place.sampling.draws == 2  # the count goes on: draw n is draw n


def test_a_run_of_draws_counts_up_and_stops(place: Place) -> None:
    assert not place.stop_generating()
    place.start_generating(3)
    assert place.sampling.generating == (0, 3)
    assert place.generated_one() and place.generated_one()
    assert place.sampling.generating == (2, 3)
    assert not place.generated_one() and place.sampling.generating is None  # the third was the last
    place.start_generating(3)
    assert place.stop_generating() and place.sampling.generating is None
    assert not place.generated_one()
