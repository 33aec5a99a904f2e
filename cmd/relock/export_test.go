package main

// Main is the command's main, for the tests to run the test binary as
// the command (see main_test.go's TestMain).
var Main = main
