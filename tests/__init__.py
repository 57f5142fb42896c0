"""The test suite, a package tree: helpers are imported by their full name
(`from tests.support.apitest import ApiClient`), from the rootdir pytest imports the
`tests` package from."""
