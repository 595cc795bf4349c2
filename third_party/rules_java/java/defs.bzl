# Offline stand-in for rules_java: every analysis parses tools/jdk, which loads this file.
java_binary = native.java_binary
java_import = native.java_import
java_library = native.java_library
java_runtime = native.java_runtime
java_toolchain = native.java_toolchain
