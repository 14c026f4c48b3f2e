// The window-wide drop target for GGUF files: highlighted while a drag hovers; dropped files
// are validated and imported, and rejected ones say why (ImportErrors).
import QtQuick
import QtQuick.Controls
import Arbor

DropArea {
    id: root
    objectName: "dropArea"
    keys: ["text/uri-list"]

    function importUrls(urls) {
        if (urls.length > 0)
            ChatController.importFiles(urls)
    }

    onDropped: (drop) => {
        if (drop.hasUrls) {
            root.importUrls(drop.urls)
            drop.acceptProposedAction()
        }
    }

    Rectangle {
        objectName: "dropHighlight"
        anchors.fill: parent
        anchors.margins: 8
        visible: root.containsDrag
        color: Qt.rgba(highlightSource.palette.highlight.r, highlightSource.palette.highlight.g, highlightSource.palette.highlight.b, 0.12)
        border.color: highlightSource.palette.highlight
        border.width: 3
        radius: 12
        Label {
            id: highlightSource
            anchors.centerIn: parent
            text: qsTr("Drop GGUF models to import them")
            font.pixelSize: 22
        }
    }
}
