# Script mode (cmake -P): writes OUT, a C++ file holding every file under
# ROOT (web/app) as text, served as /app/<relative path> (docs/dashboard.md).
# Run by the build whenever one of the files changes, so an edited page is
# in the next binary without a configure step.
file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/*.js ${ROOT}/*.mjs
     ${ROOT}/*.css ${ROOT}/*.svg ${ROOT}/*.html ${ROOT}/*.txt)
list(SORT files)
set(body "// Generated from web/app by http/embed_web.cmake; do not edit.\n")
string(APPEND body "#include \"http/embedded_text.hpp\"\n\n")
string(APPEND body "namespace mailassay::http {\n\nnamespace {\n\n")
set(table "")
set(i 0)
foreach(f ${files})
  file(READ ${ROOT}/${f} text)
  string(FIND "${text}" ")WEB\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "web/app/${f} contains )WEB\" and cannot be embedded")
  endif()
  string(APPEND body "constexpr std::string_view file_${i} = R\"WEB(${text})WEB\";\n")
  string(APPEND table "    {\"/app/${f}\", file_${i}},\n")
  math(EXPR i "${i} + 1")
endforeach()
string(APPEND body "\n} // namespace\n\nstd::span<const embedded_file> web_files() {\n")
string(APPEND body "  static constexpr embedded_file table[] = {\n${table}  };\n")
string(APPEND body "  return table;\n}\n\n} // namespace mailassay::http\n")
# Only a changed text touches the file, so an unchanged page set compiles
# nothing.
if(EXISTS ${OUT})
  file(READ ${OUT} old)
  if(old STREQUAL body)
    return()
  endif()
endif()
file(WRITE ${OUT} "${body}")
