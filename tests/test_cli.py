def test_help_lists_commands(run_cli):
    code, out, _ = run_cli("--help")
    assert code == 0 and "devices" in out


def test_no_command_is_a_usage_error(run_cli):
    code, out, _ = run_cli()
    assert code == 2 and "usage" in out


def test_unknown_command_is_a_usage_error(run_cli):
    code, _, err = run_cli("frobnicate")
    assert code == 2 and "invalid choice" in err


def test_devices_lists_pocl(run_cli):
    code, out, _ = run_cli("devices")
    assert code == 0 and "default:" in out


def test_assignments_parse_integers_and_reject_malformed_items():
    import pytest

    from mcl.cli import UsageError, parse_assignments
    assert parse_assignments(["n=2048", "m=0x10"], "--set") == {"n": 2048, "m": 16}
    assert parse_assignments(["d=0.001"], "--set", allow_float=True) == {"d": 0.001}
    for bad in (["n"], ["=3"], ["n=x"], ["d=0.5"]):
        with pytest.raises(UsageError):
            parse_assignments(bad, "--set")


def test_each_command_is_registered_by_the_component_the_table_names():
    from mcl.cli import COMMAND_COMPONENTS, COMPONENTS, build_parser
    everything = build_parser()._subparsers._group_actions[0].choices
    assert set(everything) == set(COMMAND_COMPONENTS)
    for command, component in COMMAND_COMPONENTS.items():
        assert component in COMPONENTS
        only = build_parser(command)._subparsers._group_actions[0].choices
        assert command in only, f"{component} does not register '{command}'"
